/** The OpenAPI tag of the webchat API's operations. */
export const tag = 'Webchat';
