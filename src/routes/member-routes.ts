/**
 * A dataset's members (docs/workspace.md, "Members and annotations"; decision 0028): list, add or change a
 * role, remove or leave. The rules are `datasets/dataset-members.ts`'s.
 */
import { z } from '@hono/zod-openapi';
import { datasetMembers, MEMBER_ROLES, removeMember, setMember } from '../datasets/dataset-members.js';
import { actorOf } from '../http/auth.js';
import { errorResponses, jsonResponse } from '../http/openapi-helpers.js';
import { DATASET_PATH } from '../http/paths.js';
import { route, type Route } from '../http/route.js';
import { IdParam } from './dataset-schemas.js';

const MemberRoleSchema = z.enum(MEMBER_ROLES as [string, ...string[]]).openapi({
  description: '`reader` reads the dataset wherever its owner can; `annotator` also annotates; `maintainer` also uploads, pushes, edits metadata, manages members, commits annotations and requests publication',
});

const MemberSchema = z
  .object({
    username: z.string(),
    role: MemberRoleSchema,
    added_by: z.string().nullable().openapi({ description: 'Who added the member or last changed their role; null once that account is gone' }),
    added_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('DatasetMember');

const MemberParams = IdParam.extend({ username: z.string().min(1).max(64).openapi({ param: { name: 'username', in: 'path' }, example: 'ada' }) });

export const memberRoutes: Route[] = [
  route({
    method: 'get',
    path: `${DATASET_PATH}/members`,
    summary: "The dataset's members (its owner, members and admins; anyone else gets what an unknown id gets, or 403 on a public dataset)",
    access: 'any',
    params: IdParam,
    responses: { 200: jsonResponse(z.object({ owner: z.string(), members: z.array(MemberSchema) }), 'The owner and the members, by username'), 404: errorResponses[404] },
    handler: async (c, { params }) => c.json(await datasetMembers(c.var.deps, actorOf(c).user, params.id), 200),
  }),

  route({
    method: 'put',
    path: `${DATASET_PATH}/members/:username`,
    summary: 'Add a member or change their role (owner, maintainers, admins); a new member is told by mail',
    access: 'any',
    params: MemberParams,
    body: { schema: z.object({ role: MemberRoleSchema }).openapi('MemberRole') },
    responses: { 200: jsonResponse(MemberSchema, 'The role changed'), 201: jsonResponse(MemberSchema, 'Added'), 404: errorResponses[404], 409: errorResponses[409] },
    handler: async (c, { params, body }) => {
      const { member, created } = await setMember(c.var.deps, actorOf(c), params.id, params.username, body.role as (typeof MEMBER_ROLES)[number]);
      return c.json(member, created ? 201 : 200);
    },
  }),

  route({
    method: 'delete',
    path: `${DATASET_PATH}/members/:username`,
    summary: 'Remove a member (owner, maintainers, admins), or leave (the member themselves); their access ends at once, credentials included',
    access: 'any',
    params: MemberParams,
    responses: { 204: { description: 'Removed' }, 404: errorResponses[404] },
    handler: async (c, { params }) => {
      await removeMember(c.var.deps, actorOf(c), params.id, params.username);
      return c.body(null, 204);
    },
  }),
];
