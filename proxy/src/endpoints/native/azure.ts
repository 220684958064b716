// Azure OpenAI's route shapes under /openai, so the official AzureOpenAI clients work unchanged with
// `{gateway}/openai` as their endpoint (they call `{endpoint}/openai/deployments/{deployment}/...`).
// The deployment names the model, `provider/model` included, so an Azure client reaches any
// provider; the OpenAI-format handlers then run as for /v1. The `api-version` query and the
// `api-key` header are accepted and not needed.
import type { Handler, Methods, Routes } from '../../http/server.ts';
import { OPERATIONS } from '../../unified/operations.ts';
import { operationHandler } from '../operations.ts';
import { listModels } from '../models.ts';

/** The handler, with the path's deployment as the request's model (Azure ignores the body's). */
export function withDeployment(handler: Handler): Handler {
  return (ex) => handler({ ...ex, bodyFields: { model: ex.params[0] } });
}

// Greedy: a deployment written with a raw `/` (`anthropic/claude-...`) still matches; the SDK sends it as %2F.
const DEPLOYMENT = '^/openai/openai/deployments/(.+)';

/**
 * The table's Azure operations. A longer path comes first where a shorter one ends it (chat/completions
 * before completions): the greedy deployment would take `x/chat` as the deployment name otherwise.
 */
export const AZURE_PATTERNS: [RegExp, Methods][] = [
  ...OPERATIONS.filter((op) => op.azure)
    .sort((a, b) => b.path.length - a.path.length)
    .map((op): [RegExp, Methods] => [new RegExp(`${DEPLOYMENT}/${op.path}$`), { POST: withDeployment(operationHandler(op.name)) }]),
  [new RegExp(`${DEPLOYMENT}/models$`), { GET: listModels }],
];

/** AzureOpenAI clients call these two without a deployment (the model is in the body, or none is needed). */
export const AZURE_ROUTES: Routes = {
  '/openai/openai/responses': { POST: operationHandler('responses') },
  '/openai/openai/models': { GET: listModels },
};
