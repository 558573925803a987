/**
 * The API reference page's initializer: Swagger UI (loaded before this file
 * as its own script, never inline) on the app's own OpenAPI document. No
 * validator badge: it would send the document to validator.swagger.io.
 */
import "./docs.css";

declare const SwaggerUIBundle: (options: Record<string, unknown>) => unknown;

SwaggerUIBundle({
  url: new URL("v1/openapi.json", location.href).href,
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
  tryItOutEnabled: false,
});
