//! The order of the owner's rules (the first armed rule that matches a draft decides it) and
//! copies of a rule: `rules.position`, renumbered in one write transaction.

use super::rules::audit_rule;
use super::{Found, Rule, Store};
use crate::error::{Error, Result};

impl Store {
    /// Move rule `id` to place `to` (0: first) among the rules in order, shifting the others:
    /// the order decides which rule acts first. A place past the end is the last one. Returns
    /// the rules in their new order.
    pub async fn move_rule(&self, id: i64, to: usize, actor: &str) -> Result<Vec<Rule>> {
        let rule = self.rule(id).await?;
        if rule.removed() {
            return Err(Error::refused(
                format!("move the rule “{}”", rule.definition.name),
                "it was removed",
            ));
        }
        let mut tx = self.write_tx().await?;
        // Read the order inside the write transaction: another process moving a rule at the
        // same time waits, so positions stay a permutation.
        let mut order: Vec<i64> = sqlx::query_scalar(
            "SELECT id FROM rules WHERE removed_at IS NULL ORDER BY position, id",
        )
        .fetch_all(&mut *tx)
        .await?;
        let from = order.iter().position(|r| *r == id).found("rule", id)?;
        let to = to.min(order.len() - 1);
        if from == to {
            return self.rules().await;
        }
        order.remove(from);
        order.insert(to, id);
        for (place, rule_id) in order.iter().enumerate() {
            sqlx::query("UPDATE rules SET position = ? WHERE id = ?")
                .bind(place as i64 + 1)
                .bind(rule_id)
                .execute(&mut *tx)
                .await?;
        }
        audit_rule(
            &mut tx,
            &self.keys,
            actor,
            "rule moved",
            id,
            rule.version,
            &format!("{} (now number {})", rule.definition.name, to + 1),
        )
        .await?;
        tx.commit().await?;
        self.rules().await
    }

    /// Add a copy of rule `id` at the end of the order, in shadow, named "… (copy)": a starting
    /// point for a variant, with a record of its own.
    pub async fn duplicate_rule(&self, id: i64, actor: &str) -> Result<Rule> {
        let mut definition = self.rule(id).await?.definition;
        definition.name = format!("{} (copy)", definition.name);
        self.add_rule(&definition, actor).await
    }
}
