/** D64–D65 tables (migrations/0040-interactions.ts). */
export interface AppCommandsTable {
  id: number;
  bot_id: number;
  /** null: a global command */
  guild_id: number | null;
  name: string;
  position: number;
  /** the validated declaration, JSON */
  decl: string;
  created_at: number;
}

export interface InteractionsTable {
  id: number;
  bot_id: number;
  user_id: number;
  channel_id: number;
  guild_id: number | null;
  type: number;
  /** the command's name, or the component's customId */
  name: string;
  /** SHA-256 (hex) of the interaction token */
  token_hash: string;
  message_id: number | null;
  created_at: number;
  responded_at: number | null;
  response_type: number | null;
  original_id: number | null;
  original_json: string | null;
  choices: string | null;
}

export interface InteractionsTables {
  app_commands: AppCommandsTable;
  interactions: InteractionsTable;
}
