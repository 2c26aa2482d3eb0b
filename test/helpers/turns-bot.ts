// A bot whose turns show what a transcript must tell apart: a line logged each turn, a turn kept busy
// (so the next messages arrive before its reply), a turn that fails, a choice, and a model's answer.
import { json } from './deployed-bots.ts';

const say = (text: string) => ({ type: 'say', message: { type: 'text', text } });

/**
 * Logs a line each turn; "hi" keeps its turn busy for a while (so the next messages arrive before its
 * reply), "boom" throws; "menu" offers a choice whose "track" is answered; "write …" asks a model.
 */
export const TURNS_BOT = {
  'bot.json': json({ formatVersion: 1, name: 'turns-bot' }),
  'workflows/main.json': json({
    nodes: [
      { id: 'start', type: 'start', next: 'route' },
      {
        id: 'route',
        type: 'standard',
        cards: [
          {
            type: 'code',
            code:
              "console.info('turn for: ' + event.preview);\n" +
              "if (event.preview === 'hi') { const end = Date.now() + 400; while (Date.now() < end) {} }\n" +
              "if (event.preview === 'boom') throw new Error('boom was said');\n",
          },
        ],
        next: [
          { when: "event.preview === 'menu'", to: 'menu' },
          { when: "event.preview === 'track'", to: 'track' },
          { when: "event.preview.startsWith('write')", to: 'write' },
          { to: 'echo' },
        ],
      },
      {
        id: 'menu',
        type: 'standard',
        cards: [
          {
            type: 'say',
            message: {
              type: 'choice',
              text: 'What do you need?',
              options: [
                { label: 'Track an order', value: 'track' },
                { label: 'Talk to a person', value: 'human' },
              ],
            },
          },
        ],
      },
      { id: 'track', type: 'standard', cards: [say('Your parcel ships today')] },
      {
        id: 'write',
        type: 'standard',
        cards: [{ type: 'aiGenerate', instructions: 'One line.', model: 'fast' }],
      },
      { id: 'echo', type: 'standard', cards: [say('You said: {{ event.preview }}')] },
    ],
  }),
};
