/** A page of a list, when the client asks for no size, and the largest it may ask for. */
export const PAGE_SIZE_DEFAULT = 20;
export const PAGE_SIZE_MAX = 100;
