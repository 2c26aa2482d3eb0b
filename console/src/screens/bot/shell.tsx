// One bot's screens share a frame: its name, status and deployment, and a tab per section.
import type { ComponentChildren } from 'preact';
import { admin } from '../../api/admin.ts';
import { paths } from '../../paths.ts';
import { can } from '../../roles.ts';
import { useCurrentSession } from '../../session.tsx';
import { Loaded, PageHeader, Time } from '../../ui/components.tsx';
import { useLoad } from '../../hooks.ts';
import type { BotScreenProps } from './screen-props.ts';
import { BOT_SECTIONS } from './sections.tsx';

export function BotShell(props: {
  botId: string;
  /** The section's segment of the address ('' for the overview). */
  section: string;
  children: (screen: BotScreenProps) => ComponentChildren;
}) {
  const session = useCurrentSession();
  const loaded = useLoad(() => admin.getBot(props.botId), [props.botId]);
  return (
    <Loaded {...loaded}>
      {({ bot }) => (
        <>
          <PageHeader
            title={bot.name}
            subtitle={
              <>
                <span class={`status status-${bot.status}`}>{bot.status}</span>{' '}
                {bot.deployedAt ? (
                  <>
                    deployed <Time iso={bot.deployedAt} />
                  </>
                ) : (
                  'never deployed'
                )}{' '}
                · <code>{bot.id}</code>
              </>
            }
          />
          <nav class="tabs" aria-label="Bot">
            {BOT_SECTIONS.filter((s) => !s.needs || can(session.role, s.needs)).map((s) => (
              <a
                key={s.segment}
                href={s.segment ? paths.botSection(bot.id, s.segment) : paths.bot(bot.id)}
                aria-current={s.segment === props.section ? 'page' : undefined}
              >
                {s.label}
              </a>
            ))}
          </nav>
          {props.children({
            bot,
            reloadBot: loaded.reload,
            setBot: loaded.set,
          })}
        </>
      )}
    </Loaded>
  );
}
