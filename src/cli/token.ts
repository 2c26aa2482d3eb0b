import { parseCommandLine } from '../config.ts';
import { CliError } from './errors.ts';
import { printHelp, wantsHelp } from './help.ts';
import { withDomain } from './store-command.ts';

const HELP = `usage: parley token create --email <email> [--note <note>]

Gives an account a new personal access token and prints it once. Run it where the server's data is (the
same DATA_DIR or DATABASE_URL as the server): it works on the store directly, so it is also how an
operator gets back in when every token is lost. The owner made at first start is owner@parley.local.
`;

export async function tokenCommand(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) return printHelp(HELP);
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
