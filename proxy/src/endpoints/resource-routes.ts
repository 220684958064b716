// Routes of the Files, Batch and Containers APIs, below each OpenAI-format prefix (`/v1`, `/openai`, ...).
// None is an async operation: the spec keeps batches, files and containers out of /v1/async.
import type { Methods, Routes } from '../http/server.ts';
import { deleteFile, fileContent, listFiles, retrieveFile, uploadFile } from './files.ts';
import { cancelBatch, createBatch, listBatches, retrieveBatch } from './batches.ts';
import {
  containerFileContent, createContainer, createContainerFile, deleteContainer, deleteContainerFile, listContainerFiles, listContainers,
  retrieveContainer, retrieveContainerFile,
} from './containers.ts';

export const RESOURCE_ROUTES: Routes = {
  '/files': { POST: uploadFile, GET: listFiles },
  '/batches': { POST: createBatch, GET: listBatches },
  '/containers': { POST: createContainer, GET: listContainers },
};

/** Regex sources below a prefix; the ids are the captures. */
export const RESOURCE_PATTERNS: [string, Methods][] = [
  ['/files/([^/]+)', { GET: retrieveFile, DELETE: deleteFile }],
  ['/files/([^/]+)/content', { GET: fileContent }],
  ['/batches/([^/]+)', { GET: retrieveBatch }],
  ['/batches/([^/]+)/cancel', { POST: cancelBatch }],
  ['/containers/([^/]+)', { GET: retrieveContainer, DELETE: deleteContainer }],
  ['/containers/([^/]+)/files', { POST: createContainerFile, GET: listContainerFiles }],
  ['/containers/([^/]+)/files/([^/]+)', { GET: retrieveContainerFile, DELETE: deleteContainerFile }],
  ['/containers/([^/]+)/files/([^/]+)/content', { GET: containerFileContent }],
];
