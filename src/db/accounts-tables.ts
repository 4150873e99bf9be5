import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

export type Timestamp = Date;
export type Json<T> = ColumnType<T, string, string>;

export type UserStatus = 'pending' | 'verified' | 'approved' | 'revoked';
export type UserTier = 'basic' | 'uploader';
export type UserRole = 'member' | 'admin' | 'owner';
export type UserKind = 'person' | 'service' | 'test';

export interface UsersTable {
  id: Generated<number>;
  username: string;
  email: string;
  status: UserStatus;
  tier: UserTier;
  role: UserRole;
  kind: UserKind;
  identity_conflict: Generated<boolean>;
  password_hash: string | null;
  orcid: string | null;
  oidc_subject: string | null;
  /** Live keys held; moved in the same statement as each key insert or revoke (the 25-key cap). */
  live_key_count: Generated<number>;
  upload_access_requested_at: Timestamp | null;
  approved_at: Timestamp | null;
  revoked_at: Timestamp | null;
  sandbox_completed_at: Timestamp | null;
  /** An administrator's storage limit for this account in place of the settings (0: none); null: the settings. */
  storage_quota_bytes: ColumnType<number | null, number | null | undefined, number | null>;
  created_at: Generated<Timestamp>;
  updated_at: Generated<Timestamp>;
}

export interface ApiKeysTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  /** hex SHA-256 of the whole key; the key itself is never stored. */
  key_hash: string;
  prefix: string;
  /** How the key came to be: `device`, `named`, `admin`, `bootstrap`, `legacy`. */
  origin: string;
  created_at: Generated<Timestamp>;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

export interface SessionsTable {
  /** hex SHA-256 of the cookie value. */
  id_hash: string;
  user_id: number;
  created_at: Generated<Timestamp>;
  expires_at: Timestamp;
  last_seen_at: Timestamp | null;
  ip: string | null;
  user_agent: string | null;
}

export interface LoginCodesTable {
  id: Generated<number>;
  user_id: number;
  code_hash: string;
  purpose: string;
  tries: Generated<number>;
  created_at: Generated<Timestamp>;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  /** A sign-in code's username for the pending account it verifies; null keeps the account's own. */
  username: string | null;
  /** True only on the code mailed by the sign-up that set the account's password: its verification keeps it. */
  keeps_password: Generated<boolean>;
}

export type DeviceCodeState = 'pending' | 'authorized' | 'denied' | 'used';

export interface DeviceCodesTable {
  id: Generated<number>;
  device_code_hash: string;
  user_code_hash: string;
  machine_name: string | null;
  state: DeviceCodeState;
  user_id: number | null;
  requested_ip: string | null;
  created_at: Generated<Timestamp>;
  expires_at: Timestamp;
  interval_s: number;
  last_poll_at: Timestamp | null;
  decided_at: Timestamp | null;
  key_id: number | null;
}

export interface AuditLogTable {
  id: Generated<number>;
  actor_id: number | null;
  actor_username: string | null;
  action: string;
  target: string | null;
  details: Json<Record<string, unknown>> | null;
  ip: string | null;
  created_at: Generated<Timestamp>;
}

export interface AccountsTables {
  users: UsersTable;
  api_keys: ApiKeysTable;
  sessions: SessionsTable;
  login_codes: LoginCodesTable;
  device_codes: DeviceCodesTable;
  audit_log: AuditLogTable;
}

export type User = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type ApiKey = Selectable<ApiKeysTable>;
export type DeviceCode = Selectable<DeviceCodesTable>;
