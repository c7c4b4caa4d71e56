/**
 * How a resource is read: one object by id (another workspace's id answers as none), and lists
 * (filters, operators, search, sorts, keyset pages and their cursors, expanded references).
 */
export { expand, expandParameter, expandable, expansionsOf } from './expand.js';
export { filteredFields, offeredOperators, operatorFilters, type OperatorFilter } from './filters.js';
export { afterKeyset, keysetPage, type Walk } from './keyset.js';
export type { SortValue } from './cursor.js';
export { listPage, type ListQuery } from './list.js';
export { findForUpdate, getObject } from './lookup.js';
export { WORDS_VERSION, hasEveryWord, sameTerms, searchParameter, searchableFields, termsOf } from './search.js';
