// The package's public entry for webhook receivers (package.json "exports": `rewards-etl/webhooks`):
// what a receiver written in Node needs to check a delivery (docs/payment-intents.md, "Verifying a
// delivery"). Everything else in the package is the service's own and may change without notice.

export {
  verifyRewardsSignature,
  type SignatureVerdict,
  type VerifySignatureInput,
} from './alerts/verify-signature.js';
export { EVENT_ID_HEADER, SIGNATURE_HEADER } from './alerts/sign-alert.js';
