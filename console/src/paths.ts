// Every address of the console, in one place: the router's patterns and the links both come from here.
const root = '/console';
const e = encodeURIComponent;

export const paths = {
  root,
  signIn: `${root}/sign-in`,
  bots: `${root}/bots`,
  bot: (botId: string) => `${root}/bots/${e(botId)}`,
  botSection: (botId: string, section: string) => `${root}/bots/${e(botId)}/${section}`,
  conversation: (botId: string, conversationId: string) =>
    `${root}/bots/${e(botId)}/conversations/${e(conversationId)}`,
  inbox: `${root}/inbox`,
  handoff: (botId: string, handoffId: string) => `${root}/inbox/${e(botId)}/${e(handoffId)}`,
  members: `${root}/members`,
  models: `${root}/models`,
  tokens: `${root}/tokens`,
};
