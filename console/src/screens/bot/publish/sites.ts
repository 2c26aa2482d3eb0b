// Whether two origins are the same site, as browsers partition a frame's storage by the site of the
// page around it: a chat framed by a page of another site may not keep its visitor between page loads.

/**
 * The registrable domain of a host, guessed without the public suffix list: its last two labels, or
 * three under a short second level (`shop.example.co.uk`: `example.co.uk`). An IP address or a
 * one-label host (`localhost`) is its own site. The guess errs only toward "another site", which
 * costs a note, never a missing one for a same-site page.
 */
export function siteOf(hostname: string): string {
  if (/^[\d.]+$/.test(hostname) || hostname.includes(':') || !hostname.includes('.')) return hostname;
  const labels = hostname.split('.');
  const second = labels[labels.length - 2] ?? '';
  const take = second.length <= 3 && (labels[labels.length - 1] ?? '').length === 2 ? 3 : 2;
  return labels.slice(-take).join('.');
}

/** Whether pages of `origin` are on the same site as `base` (scheme and registrable domain). */
export function sameSite(origin: string, base: string): boolean {
  try {
    const a = new URL(origin);
    const b = new URL(base);
    return a.protocol === b.protocol && siteOf(a.hostname) === siteOf(b.hostname);
  } catch {
    return false;
  }
}
