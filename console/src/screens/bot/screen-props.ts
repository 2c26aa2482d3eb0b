// What each of a bot's screens is given by the frame around it (shell.tsx): a module of its own, so
// that the screens, the frame and the list of sections that names both need not import each other.
import type { Bot } from '../../api/types.ts';
import type { Loaded as LoadedData } from '../../hooks.ts';

export interface BotScreenProps {
  bot: Bot;
  /** Loads the bot again (after a change to it). */
  reloadBot: () => void;
  setBot: LoadedData<{ bot: Bot }>['set'];
}
