import { ApiError } from '../../common/errors.js';
import type { Ctx } from './context.js';

/** The header naming the API version a request is answered in, both ways (docs/reference.md section 19). */
export const API_VERSION_HEADER = 'Api-Version';

/** What the middleware needs of the versions: which exist, and the latest. */
interface Known {
  readonly latest: string;
  readonly known: readonly string[];
  has(version: string): boolean;
}

/**
 * An error answered before the version was resolved (a 401, a 429, an unknown version) names
 * the one asked for when the service has it, else the latest. For the error renderer: a
 * middleware before authentication cost every request a layer of the chain.
 */
export function provisionalVersion(versions: Known) {
  return (ctx: Ctx): void => {
    if (ctx.response.get(API_VERSION_HEADER)) return;
    const asked = ctx.get(ASKED);
    ctx.set(API_VERSION_HEADER, asked !== '' && versions.has(asked) ? asked : (ctx.state.auth?.key.api_version ?? versions.latest));
  };
}

/** 400 invalid_api_version: `asked` is no version of the API; `versions` lists those it has, and `how` says what to do. */
export function unknownVersion(asked: string, known: readonly string[], how: string): ApiError {
  return new ApiError('invalid_api_version', `${JSON.stringify(asked.slice(0, 40))} is not a version of this API, whose versions are ${known.join(', ')} (YYYY-MM-DD): ${how}.`, { fields: { versions: known } });
}

/** The request header's name as Node keeps it. */
const ASKED = API_VERSION_HEADER.toLowerCase();

/**
 * The version the request is answered in: `Api-Version` when sent (400 invalid_api_version,
 * listing the known ones, when the service has no such version), else the key's pin (the
 * latest for a route without a key). Set on the answer, success or error.
 */
export function resolveVersion(versions: Known) {
  return (ctx: Ctx): void => {
    const asked = ctx.get(ASKED);
    if (asked !== '' && !versions.has(asked)) throw unknownVersion(asked, versions.known, "send Api-Version as one of them, or leave it out for the key's own version");
    const version = asked !== '' ? asked : (ctx.state.auth?.key.api_version ?? ctx.state.pinned ?? versions.latest);
    ctx.state.apiVersion = version;
    ctx.set(API_VERSION_HEADER, version);
  };
}
