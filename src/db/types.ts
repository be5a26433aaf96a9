import type { ColumnType, Generated } from 'kysely';

/**
 * Hand-kept row types, one interface per table. API shapes live in each feature's
 * schemas and are never these types.
 */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export interface WorkspacesTable {
  id: Generated<number>;
  name: string;
  app_id: string;
  created_at: Generated<Date>;
}

export interface UsersTable {
  id: Generated<number>;
  workspace_id: number;
  name: string;
  email: string;
  password_hash: string;
  roles: string[];
  created_at: Generated<Date>;
}

export interface ApiKeysTable {
  id: Generated<number>;
  workspace_id: number;
  name: string;
  scopes: string[];
  key_hash: string;
  key_prefix: string;
  created_at: Generated<Date>;
  last_used_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
}

export interface ConnectionsTable {
  id: Generated<number>;
  workspace_id: number;
  integration_key: string;
  external_account_id: string;
  name: string;
  created_at: Generated<Date>;
}

export interface DB {
  workspaces: WorkspacesTable;
  users: UsersTable;
  api_keys: ApiKeysTable;
  connections: ConnectionsTable;
}

export type { Timestamp, NullableTimestamp };
