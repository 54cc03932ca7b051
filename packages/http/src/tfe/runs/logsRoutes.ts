import type { PhaseKind, SignedUrls, UseCases } from '@trellis/core';
import express, { type Router } from 'express';

/** How long a log URL may ever be used: the signature's hard expiry (a phase that runs longer is cut off). */
export const LOG_URL_MAX_SECONDS = 24 * 60 * 60;

/** The signed object of a phase's log: the phase of a plan job. */
export function logObject(kind: PhaseKind, planJobId: string): string {
  return `/_signed/logs/${kind}/${planJobId}`;
}

/**
 * A phase's `log-read-url` (a path; the caller adds the origin). go-tfe's log reader replaces the
 * URL's whole query with `limit` and `offset` at every read, so the token and its signature are
 * path segments here, not query parameters. It is fresh `freshSeconds`, and stays valid while the
 * phase runs and `freshSeconds` after it ended (at most `LOG_URL_MAX_SECONDS`).
 */
export function logReadPath(
  signer: SignedUrls,
  now: Date,
  view: { kind: PhaseKind; planJobId: string; ownerId: string },
  freshSeconds: number,
): string {
  const object = logObject(view.kind, view.planJobId);
  const fresh = Math.floor(now.getTime() / 1000) + freshSeconds;
  const { token, signature } = signer.sign('GET', object, LOG_URL_MAX_SECONDS, { ow: view.ownerId, fr: fresh });
  return `${object}/${token}/${signature}`;
}

/**
 * `GET /_signed/logs/:kind/:planJobId/:token/:signature?offset=&limit=`: the phase's log framed
 * by STX/ETX (core's `TfeRunLogs`), as `application/octet-stream` bytes. No token: the CLI sends
 * none to this URL; the signature is the credential.
 */
export function logRoutes(deps: { useCases: UseCases; signer: SignedUrls; signedUrlSeconds: number }): Router {
  const router = express.Router();
  router.get('/logs/:kind/:planJobId/:token/:signature', async (req, res) => {
    const kind = req.params.kind === 'apply' ? 'apply' : req.params.kind === 'plan' ? 'plan' : null;
    const planJobId = String(req.params.planJobId);
    const claims = deps.signer.verify('GET', kind === null ? '' : logObject(kind, planJobId), {
      token: req.params.token,
      signature: req.params.signature,
    });
    const { body } = await deps.useCases.tfe.runPhases.logs.read(
      String(claims.ow),
      planJobId,
      kind as PhaseKind,
      { offset: req.query.offset, limit: req.query.limit },
      { freshUntil: Number(claims.fr), graceSeconds: deps.signedUrlSeconds },
    );
    res.status(200);
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Length', String(body.length));
    res.end(body);
  });
  return router;
}
