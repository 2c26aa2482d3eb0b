import { json } from './deployed-bots.ts';
import type { Files } from './deployed-bots.ts';

/**
 * A bot package that sends what a chat shows beyond text when told `show`: a picture, a card with a
 * postback and a link button, a carousel, a dropdown and a file; any other message gets
 * `You picked: <text>` (what a button or option answers).
 */
export function showcaseBot(picture: string): Files {
  return {
    'bot.json': json({ formatVersion: 1, name: 'showcase' }),
    'workflows/main.json': json({
      nodes: [
        {
          id: 'start',
          type: 'start',
          next: [{ when: "event.preview === 'show'", to: 'show' }, { to: 'echo' }],
        },
        {
          id: 'show',
          type: 'standard',
          cards: [
            { type: 'say', message: { type: 'image', imageUrl: picture } },
            {
              type: 'say',
              message: {
                type: 'card',
                title: 'Trail shoes',
                subtitle: 'Light and waterproof',
                imageUrl: picture,
                actions: [
                  { action: 'postback', label: 'Add to cart', value: 'add-shoes' },
                  { action: 'url', label: 'Details', value: 'https://shop.example.com/shoes' },
                ],
              },
            },
            {
              type: 'say',
              message: {
                type: 'carousel',
                items: ['Boots', 'Sandals'].map((title) => ({
                  title,
                  subtitle: 'New this season',
                  imageUrl: picture,
                  actions: [{ action: 'postback', label: `Pick ${title}`, value: title.toLowerCase() }],
                })),
              },
            },
            {
              type: 'say',
              message: {
                type: 'dropdown',
                text: 'Which size?',
                options: ['38', '40', '42'].map((size) => ({ label: `EU ${size}`, value: size })),
              },
            },
            {
              type: 'say',
              message: { type: 'file', title: 'Size guide', fileUrl: 'https://shop.example.com/sizes.pdf' },
            },
          ],
        },
        {
          id: 'echo',
          type: 'standard',
          cards: [{ type: 'say', message: { type: 'text', text: 'You picked: {{ event.preview }}' } }],
        },
      ],
    }),
  };
}
