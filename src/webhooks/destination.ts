import { ApiError, type ErrorItem } from '../common/errors.js';
import { patternErrors } from '../events/patterns.js';
import { bareHost, checkHost, DestinationError } from './ssrf.js';
import { schemeError, transportOf } from './schemes.js';
import type { WebhookDeps } from './subscriptions.js';
import { natsUrlError } from './nats.js';
import { amqpUrlError } from './amqp.js';
import { undecodablePart } from '../common/url-parts.js';

/** What to do about a refused URL when the receiver is a local one, as it is while trying webhooks out. */
const LOCAL_HINT = 'to test with a receiver on this machine or a private network, the operator sets WEBHOOK_ALLOW_PRIVATE=true (development only)';

/**
 * The first part of the URL that the service decodes (user and password; a broker's path, its
 * subject or exchange) and that is not percent-encoded UTF-8, or undefined. An https path is
 * sent as it is.
 */
function undecodable(url: URL): string | undefined {
  return undecodablePart({ user: url.username, password: url.password, ...(transportOf(url.protocol) !== 'http' ? { path: url.pathname } : {}) });
}

function withHint(deps: WebhookDeps, message: string): string {
  return deps.config.webhookAllowPrivate ? message : `${message}; ${LOCAL_HINT}`;
}

/** A URL as written: its scheme, then (past any user and password) its host, a name or a bracketed IPv6 address, and its port. */
const AUTHORITY = /^([a-z][a-z0-9+.-]*:)\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)(?::([^/?#]*))?/i;

/**
 * The URL, or why it is none, in words: the schema's `uri` format takes a port past 65535 or one
 * that is not a number (`:8443x`), which URL() then refused with a TypeError (a 500).
 */
function parsed(text: string): URL | string {
  try {
    return new URL(text);
  } catch {
    const [, scheme, host, port] = AUTHORITY.exec(text) ?? [];
    if (scheme && host === '') return noHost(scheme);
    if (port !== undefined && !/^[0-9]+$/.test(port)) return `has the port "${port.slice(0, 20)}", which is not a number`;
    if (port !== undefined && Number(port) > 65_535) return `has the port ${port.length > 10 ? `${port.slice(0, 10)}...` : port}; a port is a number from 1 to 65535`;
    return 'is not a URL the service can read (scheme://host[:port]/path)';
  }
}

/** Why a URL's host cannot be sent to, before any lookup: it has none (nats:///subject was looked up as ""). */
function hostProblem(url: URL): string | undefined {
  return bareHost(url) === '' ? noHost(url.protocol) : undefined;
}

const noHost = (scheme: string) => `has no host: write the server's name or address after ${scheme}//`;

/** What is wrong with a URL that parses, before its host is looked up: the first problem, in words. */
function urlError(deps: WebhookDeps, target: URL): string | undefined {
  const scheme = schemeError(target, deps.config.webhookAllowPrivate);
  if (scheme) return withHint(deps, scheme);
  if (target.hash) return 'must not have a fragment';
  const malformed = undecodable(target);
  if (malformed) return `must write its ${malformed} percent-encoded as UTF-8 (a % followed by two hex digits, each sequence a whole character)`;
  const transport = transportOf(target.protocol);
  return (transport === 'nats' ? natsUrlError(target) : transport === 'amqp' ? amqpUrlError(target) : undefined) ?? hostProblem(target);
}

/**
 * Where a subscription may send and what it may select (docs/reference.md section 8): the URL's scheme
 * and the patterns, then (if the scheme is fine) where the URL leads. 422 naming each problem.
 */
export async function checkSubscriptionInput(deps: WebhookDeps, body: { url?: string; events?: string[]; api_version?: string }): Promise<void> {
  const errors: ErrorItem[] = [];
  if (body.api_version !== undefined && !deps.versions.known.includes(body.api_version)) errors.push({ pointer: '/api_version', message: `must be one of this API's versions: ${deps.versions.known.join(', ')}` });
  let target: URL | undefined;
  if (body.url !== undefined) {
    const url = parsed(body.url);
    if (typeof url === 'string') errors.push({ pointer: '/url', message: url });
    else {
      target = url;
      const problem = urlError(deps, url);
      if (problem) errors.push({ pointer: '/url', message: problem });
    }
  }
  if (body.events !== undefined) errors.push(...patternErrors(body.events, deps.catalog));
  if (errors.length === 0 && target) {
    try {
      await checkHost(bareHost(target), deps.resolve, deps.config.webhookAllowPrivate);
    } catch (err) {
      if (!(err instanceof DestinationError)) throw err;
      errors.push({ pointer: '/url', message: withHint(deps, err.message) });
    }
  }
  if (errors.length > 0) throw new ApiError('validation_failed', `The subscription is invalid: ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}.`, { errors });
}
