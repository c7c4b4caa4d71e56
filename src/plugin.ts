/**
 * `workspace-api/plugin`: what a resource plugin imports, and the one entry point that stays
 * stable (the package's `exports` names it). Everything else under src/ may move.
 *
 *   import { defineResource, text, money, states, ref } from 'workspace-api/plugin';
 */
export { changed, defineResource, isSet, reached, reservePath } from './kernel/model/index.js';
export type { ChangesOf, Change, EventDeclaration, Field, Handler, JsonSchema, ObjectOf, ReservedDeclaration, ResourceDeclaration, Row, ValueOf } from './kernel/model/index.js';
export { boolean, date, datetime, email, integer, moment, money, ref, required, states, text } from './kernel/model/index.js';
export type { TextOptions } from './kernel/model/index.js';
