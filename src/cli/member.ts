import { parseCommandLine } from '../config.ts';
import { isRole } from '../domain/workspace/roles.ts';
import { CliError } from './errors.ts';
import { printHelp, wantsHelp } from './help.ts';
import { withDomain } from './store-command.ts';
import { ROLES } from '../value-sets.ts';

const HELP = `usage: parley member add --workspace <id> --email <email> --role <${ROLES.join('|')}>

Adds an account (created on first use) to a workspace with a role, acting with the workspace owner's
authority. Run it where the server's data is (the same DATA_DIR or DATABASE_URL as the server). Give the
new member a first token with: parley token create --email <email>
`;

export async function memberCommand(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) return printHelp(HELP);
  const { values, flags, positionals } = parseCommandLine(argv, process.env, {
    workspace: { type: 'string' },
    email: { type: 'string' },
    role: { type: 'string' },
  });
  const usage = `usage: parley member add --workspace <id> --email <email> --role <${ROLES.join('|')}>`;
  if (positionals[0] !== 'add') throw new CliError(usage);
  const { workspace, email, role } = flags;
  if (typeof workspace !== 'string' || typeof email !== 'string' || typeof role !== 'string') {
    throw new CliError(usage);
  }
  if (!isRole(role)) throw new CliError(`--role must be one of ${ROLES.join(', ')}`);
  return withDomain(values, async (domain) => {
    const ownerId = await domain.workspaces.ownerOf(workspace);
    if (!ownerId) throw new CliError(`no workspace ${workspace}`);
    // The operator acts with the owner's authority: the CLI runs where the store is.
    const member = await domain.members.create(
      { accountId: ownerId, workspaceId: workspace, role: 'owner' },
      email,
      role,
    );
    process.stdout.write(`${member.email} is now ${member.role} of ${workspace} (member ${member.id}).\n`);
    process.stdout.write(`Give them a first token with: parley token create --email ${member.email}\n`);
    return 0;
  });
}
