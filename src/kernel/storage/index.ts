/**
 * How a resource is stored: its store (the statements of its table, compiled once, and the
 * codec between rows and objects), the outbox its writes append events to, the search index's
 * rows, and the table plan that boot checks and `npm run migrate:make` writes migrations from.
 */
export { checkColumns, columnProblems } from './columns.js';
export { migrationName, migrationText, summary } from './migration-text.js';
export { PENDING_COLUMNS, pendingEntry, type PendingEntry } from './outbox.js';
export { parseRenames, settleRenames } from './renames.js';
export { pickFields, toStored } from './rows.js';
export { reindexStale, termRows } from './search-index.js';
export { createStores, type ResourceStore, type Stores } from './store.js';
export { planTable } from './table-plan.js';
