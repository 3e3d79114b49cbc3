import { z } from 'zod';

/**
 * The token issuer's answer (OAuth 2.0 client credentials): `access_token` is all the spec names;
 * `expires_in` (seconds, a number or a numeric string) sets the token's lifetime when present.
 */
export const tokenResponseSchema = z.looseObject({
  access_token: z.string().min(1),
  expires_in: z
    .union([
      z.number().nonnegative(),
      z
        .string()
        .regex(/^\d+(\.\d+)?$/)
        .transform(Number),
    ])
    .optional(),
  token_type: z.string().optional(),
});
export type TokenResponse = z.output<typeof tokenResponseSchema>;

/** The token request's body (JSON, all strings); `audience` is `{base_url}/`. */
export const tokenRequestSchema = z.object({
  client_id: z.string(),
  client_secret: z.string(),
  audience: z.string(),
  grant_type: z.literal('client_credentials'),
});
export type TokenRequest = z.output<typeof tokenRequestSchema>;
