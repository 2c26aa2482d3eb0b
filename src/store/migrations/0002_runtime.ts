import type { Kysely } from 'kysely';

const botRef = 'bots.id';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bot_id', 'text', (c) => c.notNull().references(botRef).onDelete('cascade'))
    .addColumn('name', 'text')
    .addColumn('picture_url', 'text')
    .addColumn('properties', 'text', (c) => c.notNull())
    .addColumn('attributes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('users_bot_created')
    .on('users')
    .columns(['bot_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('users_bot_updated')
    .on('users')
    .columns(['bot_id', 'updated_at', 'id'])
    .execute();

  await db.schema
    .createTable('conversations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bot_id', 'text', (c) => c.notNull().references(botRef).onDelete('cascade'))
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('integration', 'text', (c) => c.notNull())
    .addColumn('properties', 'text', (c) => c.notNull())
    .addColumn('message_count', 'integer', (c) => c.notNull())
    .addColumn('current_task_id', 'text')
    .addColumn('current_workflow_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('conversations_bot_created')
    .on('conversations')
    .columns(['bot_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('conversations_bot_updated')
    .on('conversations')
    .columns(['bot_id', 'updated_at', 'id'])
    .execute();

  await db.schema
    .createTable('participants')
    .addColumn('conversation_id', 'text', (c) =>
      c.notNull().references('conversations.id').onDelete('cascade'),
    )
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('participants_pk', ['conversation_id', 'user_id'])
    .execute();
  await db.schema.createIndex('participants_user').on('participants').columns(['user_id']).execute();

  await db.schema
    .createTable('messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bot_id', 'text', (c) => c.notNull().references(botRef).onDelete('cascade'))
    .addColumn('conversation_id', 'text', (c) =>
      c.notNull().references('conversations.id').onDelete('cascade'),
    )
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('direction', 'text', (c) => c.notNull())
    .addColumn('origin', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('messages_conversation_created')
    .on('messages')
    .columns(['conversation_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('messages_bot_created')
    .on('messages')
    .columns(['bot_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bot_id', 'text', (c) => c.notNull().references(botRef).onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('conversation_id', 'text')
    .addColumn('user_id', 'text')
    .addColumn('message_id', 'text')
    .addColumn('workflow_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('failure_reason', 'text')
    .addColumn('scheduled_for', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('events_bot_created')
    .on('events')
    .columns(['bot_id', 'created_at', 'id'])
    .execute();
  await db.schema.createIndex('events_due').on('events').columns(['status', 'scheduled_for']).execute();
  await db.schema
    .createIndex('events_conversation')
    .on('events')
    .columns(['conversation_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('states')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bot_id', 'text', (c) => c.notNull().references(botRef).onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('resource_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('expiry', 'bigint')
    .addColumn('expires_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('states_key', ['bot_id', 'type', 'resource_id', 'name'])
    .execute();
  await db.schema.createIndex('states_expiring').on('states').columns(['expires_at']).execute();
  await db.schema.createIndex('states_resource').on('states').columns(['resource_id']).execute();

  await db.schema
    .createTable('workflows')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bot_id', 'text', (c) => c.notNull().references(botRef).onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('input', 'text', (c) => c.notNull())
    .addColumn('output', 'text', (c) => c.notNull())
    .addColumn('parent_workflow_id', 'text')
    .addColumn('conversation_id', 'text')
    .addColumn('user_id', 'text')
    .addColumn('event_id', 'text')
    .addColumn('failure_reason', 'text')
    .addColumn('timeout_at', 'text', (c) => c.notNull())
    .addColumn('completed_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('workflows_bot_created')
    .on('workflows')
    .columns(['bot_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('observations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bot_id', 'text', (c) => c.notNull().references(botRef).onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}
