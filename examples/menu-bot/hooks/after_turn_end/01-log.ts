console.info(`turn done: visit ${conversation.visits}, choice "${workflow.choice ?? ''}"`);
