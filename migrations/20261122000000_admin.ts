import type { Knex } from 'knex';

/**
 * The administration area (docs/reference.md section 10): the people who sign in, their sessions, failed
 * sign-ins (for throttling), the audit log, and who made each key.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('users', (t) => {
    t.string('id', 64).primary();
    t.string('workspace_id', 64).notNullable().references('id').inTable('workspaces').onDelete('CASCADE');
    // Stored lower case: one person, one address, across the whole service.
    t.string('email', 254).notNullable().unique();
    t.string('name', 200).notNullable();
    t.string('role', 16).notNullable();
    // scrypt$N$r$p$salt$hash: never the password itself.
    t.string('password_hash', 255).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.bigInteger('disabled_at').nullable();
    t.index(['workspace_id', 'created_at', 'id'], 'users_ws_created');
  });
  await knex.schema.createTable('sessions', (t) => {
    // SHA-256 of the cookie's 32 random bytes: a stolen table opens no session.
    t.string('id_hash', 64).primary();
    t.string('user_id', 64).notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('last_seen_at').notNullable();
    t.index(['user_id'], 'sessions_user');
    t.index(['created_at'], 'sessions_created');
  });
  await knex.schema.createTable('sign_in_failures', (t) => {
    t.increments('id').primary();
    t.string('ip', 64).notNullable();
    t.string('email', 254).notNullable();
    t.bigInteger('at').notNullable();
    t.index(['ip', 'at'], 'sign_in_failures_ip');
    t.index(['email', 'at'], 'sign_in_failures_email');
  });
  await knex.schema.createTable('audit_log', (t) => {
    t.string('id', 64).primary();
    t.string('workspace_id', 64).notNullable().references('id').inTable('workspaces').onDelete('CASCADE');
    t.bigInteger('at').notNullable();
    t.string('actor_type', 16).notNullable();
    t.string('actor_id', 64).nullable();
    t.string('actor_label', 254).notNullable();
    t.string('action', 64).notNullable();
    t.string('target_type', 32).notNullable();
    t.string('target_id', 64).notNullable();
    t.string('ip', 64).nullable();
    t.text('details').notNullable();
    t.index(['workspace_id', 'at', 'id'], 'audit_log_ws_at');
    t.index(['workspace_id', 'action', 'at', 'id'], 'audit_log_ws_action');
  });
  await knex.schema.alterTable('api_keys', (t) => {
    // The actor that made the key, as JSON ({type, id, label}); null for keys made before.
    t.text('created_by').nullable();
    t.index(['workspace_id', 'created_at', 'id'], 'api_keys_ws_created');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (t) => {
    t.dropIndex(['workspace_id', 'created_at', 'id'], 'api_keys_ws_created');
    t.dropColumn('created_by');
  });
  await knex.schema.dropTable('audit_log');
  await knex.schema.dropTable('sign_in_failures');
  await knex.schema.dropTable('sessions');
  await knex.schema.dropTable('users');
}
