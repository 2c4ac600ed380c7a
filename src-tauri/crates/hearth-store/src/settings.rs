//! The app's settings as text by key (the `settings` table), each read and written whole by its
//! owner (hearth-app's `Settings`).

use crate::{Store, StoreError};

impl Store {
    pub async fn setting(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar("SELECT value FROM settings WHERE key = ?").bind(key).fetch_optional(self.pool()).await?)
    }

    pub async fn set_setting(&self, key: &str, value: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO settings (key, value) VALUES (?1, ?2)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(key)
        .bind(value)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    pub async fn delete_setting(&self, key: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM settings WHERE key = ?").bind(key).execute(self.pool()).await?;
        Ok(())
    }
}
