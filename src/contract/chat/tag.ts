/** The OpenAPI tag of the Chat API's operations. */
export const tag = 'Chat';
