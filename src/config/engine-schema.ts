import { z } from 'zod';
import { crashReasons, markerPhases, phases } from '../types.js';
import { identityFields, nodeFields, type EngineProfileSpec, type IdentityField, type NodeField } from '../classify/profile.js';

const pattern = z.string().min(1);
const marker = z.enum(markerPhases);

/** Schema of an engine profile file (`config/engines/<name>.yaml`); unknown keys are errors. */
export const engineProfileSchema = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9_-]*$/, 'lower-case letters, digits, "-" and "_"'),
  description: z.string().optional(),
  abstract: z.boolean().optional(),
  extends: z.array(z.string()).optional(),
  health: z.strictObject({ path: z.string().startsWith('/') }).optional(),
  restart: z.array(pattern).optional(),
  relaunch: z.array(pattern).optional(),
  version: z.array(pattern).optional(),
  phases: z.strictObject(Object.fromEntries(markerPhases.map((p) => [p, z.array(pattern).optional()])) as Record<(typeof markerPhases)[number], z.ZodOptional<z.ZodArray<typeof pattern>>>).optional(),
  guesses: z.strictObject(Object.fromEntries(markerPhases.map((p) => [p, z.array(pattern).optional()])) as Record<(typeof markerPhases)[number], z.ZodOptional<z.ZodArray<typeof pattern>>>).optional(),
  progress: z.array(z.strictObject({ name: z.string().min(1), phase: marker, pattern })).optional(),
  serving: z.array(pattern).optional(),
  closing: z.array(pattern).optional(),
  stop: z.array(pattern).optional(),
  recovery: z.array(pattern).optional(),
  exception: z.array(pattern).optional(),
  detail: z.array(pattern).optional(),
  listening: z.array(pattern).optional(),
  httpUp: z.array(pattern).optional(),
  benign: z
    .array(z.strictObject({ name: z.string().min(1), pattern, phases: z.array(z.enum(phases)).optional() }))
    .optional(),
  crashes: z
    .array(z.strictObject({ reason: z.enum(crashReasons), causal: z.boolean(), pattern, terminal: z.boolean().optional(), specific: z.boolean().optional(), interrupt: z.boolean().optional(), request: z.boolean().optional() }))
    .optional(),
  foretell: z.array(z.strictObject({ reason: z.enum(crashReasons), pattern })).optional(),
  meanings: z.array(z.strictObject({ reason: z.enum(crashReasons), pattern })).optional(),
  identity: z
    .strictObject(Object.fromEntries(identityFields.map((f) => [f, z.array(pattern).optional()])) as Record<IdentityField, z.ZodOptional<z.ZodArray<typeof pattern>>>)
    .optional(),
  deadlines: z
    .array(
      z.strictObject({
        kind: z.string().regex(/^[a-z][a-z0-9_]{0,39}$/, 'lower-case letters, digits and "_"'),
        env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'),
        defaultSeconds: z.number().positive(),
        description: z.string().optional(),
      }),
    )
    .optional(),
  waiting: z.array(pattern).optional(),
  worker: z.strictObject({ ready: z.array(pattern).optional() }).optional(),
  node: z
    .strictObject(Object.fromEntries(nodeFields.map((f) => [f, z.array(pattern).optional()])) as Record<NodeField, z.ZodOptional<z.ZodArray<typeof pattern>>>)
    .optional(),
}) satisfies z.ZodType<EngineProfileSpec>;
