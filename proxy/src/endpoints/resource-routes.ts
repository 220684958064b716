// Routes of the Files and Batch APIs, below each OpenAI-format prefix (`/v1`, `/openai`, ...).
import type { Methods, Routes } from '../http/server.ts';
import { deleteFile, fileContent, listFiles, retrieveFile, uploadFile } from './files.ts';
import { cancelBatch, createBatch, listBatches, retrieveBatch } from './batches.ts';

export const RESOURCE_ROUTES: Routes = {
  '/files': { POST: uploadFile, GET: listFiles },
  '/batches': { POST: createBatch, GET: listBatches },
};

/** Regex sources below a prefix; the id is the capture. */
export const RESOURCE_PATTERNS: [string, Methods][] = [
  ['/files/([^/]+)', { GET: retrieveFile, DELETE: deleteFile }],
  ['/files/([^/]+)/content', { GET: fileContent }],
  ['/batches/([^/]+)', { GET: retrieveBatch }],
  ['/batches/([^/]+)/cancel', { POST: cancelBatch }],
];
