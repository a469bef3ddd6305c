import express, { type RequestHandler } from 'express';
import { requireJsonBody } from './errors.js';

/**
 * JSON body for one route, mounted after auth so an unauthenticated client cannot make
 * the gateway parse megabytes: 415 unless JSON, 400 if absent or broken, 413 over the limit.
 */
export function jsonBody(limitBytes: number): RequestHandler[] {
  return [requireJsonBody, express.json({ limit: limitBytes, strict: true, type: ['application/json', 'application/*+json'] })];
}
