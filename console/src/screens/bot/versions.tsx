// A bot's versions: what each deploy of its code kept, newest first, the one the bot runs marked. A
// developer deploys another one (a rollback, or forward again) once told what becomes of the conversations
// going on; that makes no new version, the mark moves. The API answers every version at once: no pages.
import { useState } from 'preact/hooks';
import { collect } from '../../../../src/contract/client.ts';
import { admin } from '../../api/admin.ts';
import { MAX_LISTED } from '../../api/client.ts';
import type { BotVersion } from '../../api/types.ts';
import { useAction, useLoad } from '../../hooks.ts';
import { can } from '../../roles.ts';
import { useCurrentSession } from '../../session.tsx';
import { EmptyState, InlineError, ListTable, Loaded, Time } from '../../ui/components.tsx';
import type { Column } from '../../ui/components.tsx';
import type { BotScreenProps } from './screen-props.ts';

/** What the server records of how a version was made: the kind of code it keeps. */
const MADE_WITH: Record<NonNullable<BotVersion['runtime']>, string> = {
  parley: 'Package (parley deploy)',
  'botpress-sdk': 'SDK bundle (bp deploy)',
};

/** An id's last characters: those that tell a bot's versions apart (the first are their creation time). */
const shortId = (id: string) => `…${id.slice(-8)}`;

/** What deploying `version` does, said before it is done. */
function ConfirmDeploy(props: {
  version: BotVersion;
  busy: boolean;
  error: unknown;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const { name, number } = props.version;
  return (
    <div class="panel confirm-deploy" role="group" aria-labelledby="confirm-deploy-title">
      <h2 id="confirm-deploy-title">
        Deploy {name} (version {number})?
      </h2>
      <p>
        The bot runs {name} from its next turn: its code and definition become the version’s. Its
        configuration values, secrets, integrations and tables stay as they are. No new version is made.
      </p>
      <p>
        Conversations going on are kept, and each one’s next message is answered by {name}. A dialog waiting
        in a node (for an answer, say) goes on there when {name} has that node (same workflow, same node id);
        when it does not, the dialog starts over as a new one would, and the bot’s logs say so in a warning.
      </p>
      <div class="actions">
        <button type="button" autoFocus disabled={props.busy} onClick={props.onConfirm}>
          Yes, deploy {name}
        </button>
        <button type="button" class="secondary" disabled={props.busy} onClick={props.onCancel}>
          Cancel
        </button>
      </div>
      <InlineError error={props.error} />
    </div>
  );
}

export function Versions({ bot, reloadBot }: BotScreenProps) {
  const session = useCurrentSession();
  const mayDeploy = can(session.role, 'bots.write');
  const versions = useLoad(() => admin.listBotVersions(bot.id), [bot.id]);
  // Who made each version, by email; an account no longer a member shows as its id.
  const members = useLoad(
    () => collect(admin.listWorkspaceMembers, 'members', {}, MAX_LISTED),
    [session.workspace.id],
  );
  const emails = new Map(members.data?.items.map((m) => [m.userId, m.email]));
  const [asking, setAsking] = useState<BotVersion | undefined>(undefined);
  const [deployed, setDeployed] = useState<BotVersion | undefined>(undefined);
  const deploy = useAction(async (version: BotVersion) => {
    await admin.deployBotVersion(bot.id, version.id);
    setAsking(undefined);
    setDeployed(version);
    versions.reload();
    // The frame's "deployed …" line.
    reloadBot();
  });

  const deployColumn: Column<BotVersion> = {
    label: 'Actions',
    hiddenLabel: true,
    cell: (v) =>
      v.deployed ? null : (
        <button
          type="button"
          class="small secondary"
          aria-label={`Deploy ${v.name}`}
          disabled={deploy.busy}
          onClick={() => {
            deploy.clear();
            setDeployed(undefined);
            setAsking(v);
          }}
        >
          Deploy
        </button>
      ),
  };

  return (
    <section aria-label="Versions">
      <p class="muted">
        Every deploy of the bot’s code (<code>parley deploy</code>, <code>bp deploy</code>) keeps what it
        deployed as a version, never changed after. Deploying an older one rolls the bot back; a newer one,
        forward again. From a terminal: <code>parley versions list|deploy</code>.
      </p>
      {!mayDeploy && (
        <p class="notice" role="note">
          Read only: your role ({session.role}) may not deploy versions. A developer of this workspace can.
        </p>
      )}
      {/* A role lost meanwhile (the console reads it again after a 403) leaves the refusal, not the question. */}
      {asking && mayDeploy ? (
        <ConfirmDeploy
          version={asking}
          busy={deploy.busy}
          error={deploy.error}
          onConfirm={() => void deploy.run(asking)}
          onCancel={() => {
            deploy.clear();
            setAsking(undefined);
          }}
        />
      ) : (
        <InlineError error={deploy.error} />
      )}
      {deployed && (
        <p class="notice" role="status">
          {deployed.name} (version {deployed.number}) is deployed: the bot answers with it from now on.
        </p>
      )}
      <Loaded {...versions}>
        {({ versions: items }) =>
          items.length === 0 ? (
            <EmptyState title="No versions">
              <p>
                The bot has no code deployed yet: <code>parley deploy</code> (or <code>bp deploy</code>) makes
                its first version.
              </p>
            </EmptyState>
          ) : (
            <ListTable
              items={items}
              columns={[
                {
                  label: 'Version',
                  cell: (v) => (
                    <>
                      <strong>{v.name}</strong>
                      {v.deployed && <span class="status status-active deployed-mark">deployed</span>}
                    </>
                  ),
                },
                {
                  label: 'Id',
                  wide: true,
                  cell: (v) => <code title={v.id}>{shortId(v.id)}</code>,
                },
                { label: 'Made', cell: (v) => <Time iso={v.createdAt} /> },
                {
                  label: 'By',
                  wide: true,
                  cell: (v) =>
                    v.createdBy === undefined ? (
                      <span class="muted">unknown</span>
                    ) : (
                      (emails.get(v.createdBy) ?? <code>{v.createdBy}</code>)
                    ),
                },
                {
                  label: 'Made with',
                  wide: true,
                  cell: (v) => (v.runtime ? MADE_WITH[v.runtime] : <span class="muted">unknown</span>),
                },
                { label: 'Note', cell: (v) => v.description ?? <span class="muted">no note</span> },
                ...(mayDeploy ? [deployColumn] : []),
              ]}
            />
          )
        }
      </Loaded>
    </section>
  );
}
