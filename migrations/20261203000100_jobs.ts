/**
 * Jobs (docs/reference.md section 21): work the administration area asks for that runs off the
 * request path, polled by its id. The first is the deletion of a workspace's test data. A job is
 * queued, then claimed by one process at a time under a lease (a process that dies leaves it to
 * another once the lease ends), then succeeded or failed; `progress` counts what it has done.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('jobs', (t) => {
    t.string('id', 64).primary();
    t.string('workspace_id', 64).notNullable().references('id').inTable('workspaces').onDelete('CASCADE');
    t.string('kind', 32).notNullable();
    t.string('status', 16).notNullable();
    t.text('progress').notNullable();
    t.text('error').nullable();
    t.text('created_by').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('started_at').nullable();
    t.bigInteger('finished_at').nullable();
    t.string('lease_owner', 64).nullable();
    t.bigInteger('lease_until').nullable();
    t.index(['status', 'created_at'], 'jobs_status');
    t.index(['workspace_id', 'kind', 'status'], 'jobs_workspace');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('jobs');
}
