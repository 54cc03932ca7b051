import type { Request, Response } from 'express';

const TEMPLATE = 'trellisRouteTemplate';

/** Marks the request as served by the route `template` (express syntax, e.g. `/api/jobs/:id`). */
export function setRouteTemplate(res: Response, template: string): void {
  res.locals[TEMPLATE] = template;
}

/**
 * The route a request matched, as a template, so labels and span names stay bounded: the API
 * route's template, else the path pattern of the express route that answered, else `unmatched`
 * (never the raw path, which carries ids).
 */
export function routeTemplate(req: Request, res: Response): string {
  const marked = res.locals[TEMPLATE];
  if (typeof marked === 'string') return marked;
  const route = (req as { route?: { path?: unknown } }).route;
  return typeof route?.path === 'string' ? route.path : 'unmatched';
}
