// Variables of every scope: the conversation's visits, the bot's counter across all conversations.
conversation.visits = Number(conversation.visits ?? 0) + 1;
if (conversation.visits === 1) bot.conversationsStarted = Number(bot.conversationsStarted ?? 0) + 1;
