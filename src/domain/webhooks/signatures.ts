/**
 * Webhook signatures in the Standard Webhooks format (`webhook-id`, `webhook-timestamp` and
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, secrets `whsec_<base64>`):
 * a published scheme with libraries in many languages, so a sender or a receiver needs no code of ours.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

/** The headers of a signed request, by their lower-case names. */
export const SIGNATURE_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

export function newSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** Why a request's signature does not hold, or undefined when it does. */
export function signatureProblem(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  body: Buffer,
): string | undefined {
  const signed: Record<string, string> = {};
  for (const name of Object.values(SIGNATURE_HEADERS)) {
    const value = headers[name];
    if (typeof value === 'string') signed[name] = value;
  }
  try {
    new Webhook(secret).verify(body, signed, { jsonParse: false });
    return undefined;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.message;
    throw error;
  }
}

/** The headers that sign `body`, sent as delivery `id` at `at`. */
export function signatureHeaders(
  secret: string,
  body: string,
  id: string = randomUUID(),
  at: Date = new Date(),
): Record<(typeof SIGNATURE_HEADERS)[keyof typeof SIGNATURE_HEADERS], string> {
  return {
    [SIGNATURE_HEADERS.id]: id,
    [SIGNATURE_HEADERS.timestamp]: String(Math.floor(at.getTime() / 1000)),
    [SIGNATURE_HEADERS.signature]: new Webhook(secret).sign(id, at, body),
  };
}
