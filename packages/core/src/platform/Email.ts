/** Longest email address, in characters (RFC 5321's path limit): a wallet holder's and a cardholder's. */
export const MAX_EMAIL_LENGTH = 254
