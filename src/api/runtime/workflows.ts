import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { TagMap } from '../../domain/schemas.ts';
import {
  CreateWorkflowBodySchema,
  GetOrCreateWorkflowBodySchema,
  UpdateWorkflowBodySchema,
  WORKFLOW_STATUSES,
  WorkflowSchema,
} from '../../domain/workflows.ts';
import { botActorOf } from '../auth.ts';
import { CreatedMeta, EmptySchema, errorResponses, IdParams, listOf, PageQuery } from '../common.ts';

const tags = ['Workflows'];
const WorkflowResponse = Type.Object({ workflow: WorkflowSchema });

export const workflowRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { workflows } = app.domain;

  app.post(
    '/workflows',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'createWorkflow',
        tags,
        body: CreateWorkflowBodySchema,
        response: { 201: WorkflowResponse, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply.code(201).send({ workflow: await workflows.create(botActorOf(request), request.body) }),
  );

  app.get(
    '/workflows/:id',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'getWorkflow',
        tags,
        params: IdParams,
        response: { 200: WorkflowResponse, ...errorResponses },
      },
    },
    async (request) => ({ workflow: await workflows.get(botActorOf(request), request.params.id) }),
  );

  app.put(
    '/workflows/:id',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'updateWorkflow',
        tags,
        description:
          'A finished workflow (completed, cancelled, failed, timed out) keeps its status; finishing sets completedAt.',
        params: IdParams,
        body: UpdateWorkflowBodySchema,
        response: { 200: WorkflowResponse, ...errorResponses },
      },
    },
    async (request) => ({
      workflow: await workflows.update(botActorOf(request), request.params.id, request.body),
    }),
  );

  app.delete(
    '/workflows/:id',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'deleteWorkflow',
        tags,
        params: IdParams,
        response: { 200: EmptySchema, ...errorResponses },
      },
    },
    async (request) => {
      await workflows.delete(botActorOf(request), request.params.id);
      return {};
    },
  );

  app.get(
    '/workflows',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'listWorkflows',
        tags,
        querystring: Type.Object({
          ...PageQuery,
          tags: Type.Optional(TagMap),
          conversationId: Type.Optional(Type.String()),
          userId: Type.Optional(Type.String()),
          parentWorkflowId: Type.Optional(Type.String()),
          statuses: Type.Optional(Type.Array(Type.Enum(WORKFLOW_STATUSES))),
          name: Type.Optional(Type.String()),
        }),
        response: { 200: listOf('workflows', WorkflowSchema), ...errorResponses },
      },
    },
    async (request) => {
      const page = await workflows.list(botActorOf(request), request.query);
      return { workflows: page.items, meta: { nextToken: page.nextToken } };
    },
  );

  app.post(
    '/workflows/get-or-create',
    {
      config: { auth: 'bot' },
      schema: {
        operationId: 'getOrCreateWorkflow',
        tags,
        body: GetOrCreateWorkflowBodySchema,
        response: { 200: Type.Object({ workflow: WorkflowSchema, meta: CreatedMeta }), ...errorResponses },
      },
    },
    async (request) => {
      const { workflow, created } = await workflows.getOrCreate(botActorOf(request), request.body);
      return { workflow, meta: { created } };
    },
  );
};
