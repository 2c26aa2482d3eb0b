/** The public URLs Parley hands out, from the origin its clients reach it at. */
export class Links {
  /** Set once the server knows where it listens (or from PARLEY_PUBLIC_URL). */
  baseUrl = 'http://127.0.0.1:3000';
  /**
   * The origin of file contents (PARLEY_CONTENT_URL), when it is not `baseUrl`'s: what users upload is
   * then served from there, never from the origin of the console and the webchat.
   */
  contentUrl: string | undefined;

  /** Where the signed and public URLs of file contents point. */
  get contentBaseUrl(): string {
    return this.contentUrl ?? this.baseUrl;
  }

  /** The Chat API base of one channel: what `@botpress/chat`'s `apiUrl` is. */
  chatUrl(webhookId: string): string {
    return `${this.baseUrl}/chat/${webhookId}`;
  }

  /** A bot's webhook ingress: senders post to it, or to any path under it. */
  webhookUrl(webhookId: string): string {
    return `${this.baseUrl}/webhooks/${webhookId}`;
  }

  /** What the official webchat's `apiUrl` is: it adds `/{clientId}` itself. */
  webchatApiUrl(): string {
    return `${this.baseUrl}/webchat`;
  }

  /** A full-page chat with the bot of a channel. */
  webchatShareUrl(clientId: string): string {
    return `${this.baseUrl}/s/${clientId}`;
  }
}
