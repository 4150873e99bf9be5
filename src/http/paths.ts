/**
 * A dataset id in a route path, for the API and the pages alike: Hono matches only ids here, so
 * `/datasets/search` and friends reach their own routes.
 */
export const DATASET_PATH = '/datasets/:id{[ns][db][0-9]+}';
