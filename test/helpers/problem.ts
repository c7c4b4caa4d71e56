import { STATUS_CODES } from 'node:http';
import { expect } from 'chai';

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  code: string;
  detail: string;
  request_id: string;
  errors?: Array<{ pointer?: string; parameter?: string; message: string }>;
  /** On version_mismatch: the object's version now. */
  current_version?: number;
}

/** Asserts an RFC 9457 answer with this status and code, and returns its body. */
export async function problem(res: Response, status: number, code: string): Promise<ProblemBody> {
  expect(res.status, `status of ${res.url}`).to.equal(status);
  expect(res.headers.get('content-type')).to.equal('application/problem+json');
  const body = (await res.json()) as ProblemBody;
  expect(body).to.include({ type: 'about:blank', status, code });
  // RFC 9457: with type about:blank, the title is the status phrase.
  expect(body.title).to.equal(STATUS_CODES[status]);
  expect(body.detail).to.be.a('string').with.length.greaterThan(0);
  expect(body.request_id).to.equal(res.headers.get('x-request-id'));
  return body;
}
