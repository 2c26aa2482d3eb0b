import type { Visibility } from '../../value-sets.ts';
import { forbidden } from '../shared/errors.ts';
import type { Operator } from '../workspace/operator.ts';
import { OWNER_EMAIL } from '../workspace/bootstrap.ts';

/** What a body asks for: `visibility` (CLI 7) wins over `public` (older clients); undefined keeps it. */
export function requestedVisibility(body: {
  public?: boolean;
  visibility?: Visibility;
}): Visibility | undefined {
  if (body.visibility !== undefined) return body.visibility;
  if (body.public !== undefined) return body.public ? 'public' : 'private';
  return undefined;
}

/** Whether the hub's lookups find it (by name or id); its listings show only `public` ones. */
export const isPublished = (visibility: Visibility) => visibility !== 'private';

/**
 * Publishing integrations, interfaces and plugins to every workspace: what a workspace deploys stays
 * its own, and only the server's operator changes that, either way. A body that asks for the
 * visibility it already has changes nothing and needs no one.
 */
export class Publishing {
  constructor(private readonly operator: Operator) {}

  /** The visibility a create or update leaves; 403 naming the field when the actor may not set it. */
  async next(
    actor: { accountId: string },
    current: Visibility,
    body: { public?: boolean; visibility?: Visibility },
  ): Promise<Visibility> {
    const wanted = requestedVisibility(body);
    if (wanted === undefined || wanted === current) return current;
    if (!(await this.operator.is(actor.accountId))) {
      const field = body.visibility !== undefined ? 'visibility' : 'public';
      throw forbidden(
        `${field}: only the server's operator (${OWNER_EMAIL}) publishes to every workspace or takes back what was published; leave it ${current}`,
      );
    }
    return wanted;
  }
}
