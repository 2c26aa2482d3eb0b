import { parseCommandLine } from '../config.ts';
import { CliError } from './errors.ts';
import { withDomain } from './store-command.ts';

export async function tokenCommand(argv: string[]): Promise<number> {
  const { values, flags, positionals } = parseCommandLine(argv, process.env, {
    email: { type: 'string' },
    note: { type: 'string' },
  });
  if (positionals[0] !== 'create')
    throw new CliError('usage: parley token create --email <email> [--note <note>]');
  const email = flags.email;
  if (typeof email !== 'string') throw new CliError('--email is required');
  const note = typeof flags.note === 'string' ? flags.note : 'created with parley token create';
  return withDomain(values, async (domain) => {
    const account = await domain.accounts.findByEmail(email);
    if (!account) {
      throw new CliError(
        `no account has the email ${email}: add it to a workspace first (parley member add, or createWorkspaceMember)`,
      );
    }
    const pat = await domain.accounts.createToken(account.id, note);
    process.stdout.write(`${pat.value}\n`);
    process.stderr.write(`Token ${pat.id} for ${account.email}: shown once, keep it now.\n`);
    return 0;
  });
}
