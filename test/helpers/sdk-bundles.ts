/**
 * Hand-written SDK bundles (what `bp build` makes, reduced to the handler), deployed with createBot as
 * `bp deploy` does: quick to deploy, and free to do what a bot's code may try.
 */

/**
 * A bundle whose `handle(text, reply)` runs for each chat message: `text` is the message's, `reply(t)`
 * posts a text message back through the Runtime API (as the bot, with its process's key).
 */
export function chatBundle(handle: string): string {
  return `
const reply = async (req, event, text) => {
  const res = await fetch(process.env.BP_API_URL + '/v1/chat/messages', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer ' + process.env.BP_TOKEN,
      'x-bot-id': req.headers['x-bot-id'],
    },
    body: JSON.stringify({ conversationId: event.conversationId, userId: req.headers['x-bot-id'], type: 'text', payload: { text }, tags: {} }),
  });
  if (!res.ok) throw new Error('reply failed: ' + res.status + ' ' + (await res.text()));
};
module.exports = {
  handler: async (req) => {
    if (req.headers['x-bp-operation'] !== 'event_received') return { status: 200 };
    const event = JSON.parse(req.body).event;
    const text = event.payload.message.payload.text;
    await (async (text, reply) => { ${handle} })(text, (t) => reply(req, event, t));
    return { status: 200 };
  },
};
`;
}
