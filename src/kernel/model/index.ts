/**
 * What a resource is: a plugin's declaration (`defineResource`, `reservePath`), its fields and
 * their kinds (a kind is a field's column, codec, schema and what a list can do with it), money's
 * pairs, the JSON Schemas derived from the fields, the ajv instances that compile them and the
 * words their errors are said in. Imports no value from the other rooms of the kernel.
 */
export { compileOnUse, createQueryAjv, createSchemaAjv, validatorPerKey } from './ajv.js';
export { KERNEL_TAIL, PluginLoadError, changed, isKernelSort, objectColumns, objectKeys, defineResource, isPlugin, isSet, reached, reservePath, type Change, type EventDeclaration, type Handler, type HookContext, type JsonSchema, type PluginExport, type Reserved, type ReservedDeclaration, type Resource, type ResourceDeclaration, type Row, type SortField, type Typed, typed, type ChangesOf, type Field, type ObjectOf, type ValueOf } from './define.js';
export { boolean, date, datetime, deprecationOf, email, integer, moment, money, ref, referenceOf, required, states, text, type TextOptions } from './fields.js';
export { kindOf, kinds, type FieldKind, type FilterOperator } from './kinds.js';
export { bodyErrors, valueMessage } from './messages.js';
export { checkMoney, moneyPairs, type MoneyPair } from './money.js';
export { EMPTY_QUERY_SCHEMA, PAGE_PARAMETERS, actionBodySchema, batchBodySchema, createBodySchema, listQuerySchema, objectSchema, updateBodySchema } from './schemas.js';
export { CHANGE_KINDS, FIRST_VERSION, changeKind, isVersionDate, latestShape, newestFirst, requiredOf, shapeBefore, type ChangeDeclaration, type ChangeKind, type Shape } from './changes.js';
