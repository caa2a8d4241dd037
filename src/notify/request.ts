/**
 * What one delivery sends: the URL, the body and its content type. Every destination kind turns a
 * notification into one of these; the dispatcher adds the bearer token and posts it.
 */

/** One HTTP POST to a destination. */
export interface DeliveryRequest {
  readonly url: string;
  readonly body: string;
  readonly contentType: string;
}
