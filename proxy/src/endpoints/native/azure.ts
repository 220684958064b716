// Azure OpenAI's route shapes under /openai, so the official AzureOpenAI clients work unchanged with
// `{gateway}/openai` as their endpoint (they call `{endpoint}/openai/deployments/{deployment}/...`).
// The deployment names the model, `provider/model` included, so an Azure client reaches any
// provider; the OpenAI-format handlers then run as for /v1. The `api-version` query and the
// `api-key` header are accepted and not needed.
import type { Handler, Methods, Routes } from '../../http/server.ts';
import { chatCompletions } from '../../operations/chat.ts';
import { textCompletions } from '../../operations/completions.ts';
import { responses } from '../../operations/responses.ts';
import { embeddings } from '../../operations/embeddings.ts';
import { imageGenerations } from '../../operations/images.ts';
import { speech } from '../../operations/audio.ts';
import { listModels } from '../models.ts';

/** The handler, with the path's deployment as the request's model (Azure ignores the body's). */
export function withDeployment(handler: Handler): Handler {
  return (ex) => handler({ ...ex, bodyFields: { model: ex.params[0] } });
}

// Greedy: a deployment written with a raw `/` (`anthropic/claude-...`) still matches; the SDK sends it as %2F.
const DEPLOYMENT = '^/openai/openai/deployments/(.+)';

export const AZURE_PATTERNS: [RegExp, Methods][] = [
  [new RegExp(`${DEPLOYMENT}/chat/completions$`), { POST: withDeployment(chatCompletions) }],
  [new RegExp(`${DEPLOYMENT}/completions$`), { POST: withDeployment(textCompletions) }],
  [new RegExp(`${DEPLOYMENT}/responses$`), { POST: withDeployment(responses) }],
  [new RegExp(`${DEPLOYMENT}/embeddings$`), { POST: withDeployment(embeddings) }],
  [new RegExp(`${DEPLOYMENT}/images/generations$`), { POST: withDeployment(imageGenerations) }],
  [new RegExp(`${DEPLOYMENT}/audio/speech$`), { POST: withDeployment(speech) }],
  [new RegExp(`${DEPLOYMENT}/models$`), { GET: listModels }],
];

/** AzureOpenAI clients call these two without a deployment (the model is in the body, or none is needed). */
export const AZURE_ROUTES: Routes = {
  '/openai/openai/responses': { POST: responses },
  '/openai/openai/models': { GET: listModels },
};
