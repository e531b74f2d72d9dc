/**
 * Tables of the files area (D22–D24). Sizes and counters are bigint columns read as JS numbers
 * (exact up to 2^53−1, far beyond any quota); days and months are small integers.
 */
export interface FilesTable {
  /** snowflake; the public name of the file in `{cdn_url}/files/<id>/<filename>` (D23) */
  id: number;
  /** who uploaded it (bot user or person, D10) */
  owner_id: number;
  /** random key of the blob in the blob store; never derived from anything the client sent */
  storage_key: string;
  /** sanitized file name, part of the URL */
  filename: string;
  size: number;
  /** D15 kind: 1 image, 2 audio, 3 video */
  kind: number;
  /** sniffed Content-Type (D23) */
  mime: string;
  /** D61: an image's dimensions, read from the file at upload (null: not an image, or older) */
  width: number | null;
  height: number | null;
  /** the quota buckets this upload was charged to (days / months since the epoch, UTC) */
  quota_day: number;
  quota_month: number;
  created_at: number;
}

/**
 * D24: one row per user and UTC day: bytes uploaded that day and messages sent that day (each
 * message raises the day's limit). Rows are created on first use; old days are never read again.
 */
export interface UploadUsageDailyTable {
  user_id: number;
  day: number;
  bytes_used: number;
  messages_sent: number;
}

/** D24: bytes uploaded per user and UTC calendar month (year × 12 + month index). */
export interface UploadUsageMonthlyTable {
  user_id: number;
  month: number;
  bytes_used: number;
}

export interface FilesTables {
  files: FilesTable;
  upload_usage_daily: UploadUsageDailyTable;
  upload_usage_monthly: UploadUsageMonthlyTable;
}
