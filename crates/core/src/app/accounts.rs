//! Accounts the running app follows: connecting and removing them, and each account's
//! follower task (the live loop that keeps its mirror current).

use super::*;

impl RunningApp {
    /// Connect a Gmail account (Google's consent) and start following it.
    pub async fn connect_gmail(&self, connect: crate::services::GmailConnect) -> Result<Account> {
        let account = self.services.connect_gmail(&self.store, connect).await?;
        self.follow(account.clone());
        self.connected(&account);
        Ok(account)
    }

    /// Sign in to a muster instance and start following it.
    pub async fn connect_muster(&self, url: &str, password: &str) -> Result<Account> {
        let account = self
            .services
            .connect_muster(&self.store, url, password)
            .await?;
        self.follow(account.clone());
        self.connected(&account);
        Ok(account)
    }

    /// Remove an account: its live task is stopped (and has ended) before its secrets and
    /// everything mirrored for it are deleted, so nothing of it reaches the service or the
    /// mirror afterwards.
    pub async fn remove_account(&self, account_id: &str) -> Result<()> {
        self.unfollow(account_id).await;
        self.services
            .remove_account(&self.store, account_id)
            .await?;
        (self.on_event)(AppEvent::ItemsChanged(ItemsChanged::unknown(
            ChangeCause::Accounts,
            Some(account_id.to_string()),
        )));
        Ok(())
    }

    /// Start following an account (done by [`Self::start`], [`Self::connect_gmail`] and
    /// [`Self::connect_muster`]). A Gmail account followed already (reconnected) is checked at
    /// once by its running loop; a muster account followed already is followed anew (its
    /// event stream signs in again with the new password).
    pub(super) fn follow(&self, account: Account) {
        let mut followed = self.followed.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(current) = followed.get(&account.id) {
            if account.profile.kind == Source::Gmail && !current.task.is_finished() {
                self.poll_gmail_now.notify_waiters();
                return;
            }
            current.stop.send_replace(true);
        }
        let (stop, stopped) = watch::channel(*self.stop.borrow());
        let task = self.spawn_follower(account.clone(), stopped);
        followed.insert(account.id, Following { stop, task });
    }

    fn connected(&self, account: &Account) {
        (self.on_event)(AppEvent::ItemsChanged(ItemsChanged::unknown(
            ChangeCause::Accounts,
            Some(account.id.clone()),
        )));
    }

    /// Stop following an account and wait until its task has ended.
    async fn unfollow(&self, account_id: &str) {
        let following = self
            .followed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(account_id);
        let Some(following) = following else {
            return;
        };
        following.stop.send_replace(true);
        if let Err(e) = following.task.await {
            tracing::warn!(account = %account_id, error = %e, "the account's live task failed");
        }
    }

    fn spawn_follower(
        &self,
        account: Account,
        stop: watch::Receiver<bool>,
    ) -> tokio::task::JoinHandle<()> {
        let on_change = self.change_handler();
        let store = self.store.clone();
        match account.profile.kind {
            Source::Gmail => tokio::spawn(poll_gmail(
                store,
                self.services.clone(),
                account,
                self.options.gmail_cadence,
                self.window_visible.subscribe(),
                self.poll_gmail_now.clone(),
                on_change,
                stop,
            )),
            Source::Muster => {
                let services = self.services.clone();
                let pace = MusterPace {
                    events: self.options.events.clone(),
                    polling: self.options.muster_polling,
                };
                let window_visible = self.window_visible.subscribe();
                tokio::spawn(async move {
                    match services.muster(&account).await {
                        Ok(client) => {
                            follow_muster(
                                store,
                                account,
                                client,
                                pace,
                                window_visible,
                                on_change,
                                stop,
                            )
                            .await
                        }
                        Err(e) => {
                            tracing::warn!(account = %account.id, error = %e, "cannot follow muster")
                        }
                    }
                })
            }
        }
    }
}
