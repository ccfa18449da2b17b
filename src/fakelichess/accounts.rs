//! Accounts: who a token belongs to, how an account looks in lichess's documents, the bot
//! upgrade, and the list of online bots.

use serde_json::{Value, json};

use super::FakeAccount;
use super::state::{Inner, Res, err};

impl Inner {
    pub(crate) fn account(&self, id: &str) -> Option<&FakeAccount> {
        self.config
            .accounts
            .iter()
            .find(|a| a.id == id.to_lowercase())
    }

    /// The account id of a bearer token.
    pub(crate) fn user_of_token(&self, token: Option<&str>) -> Option<String> {
        let token = token?;
        self.config
            .accounts
            .iter()
            .find(|a| a.token == token)
            .map(|a| a.id.clone())
    }

    pub(crate) fn user_json(&self, id: &str) -> Value {
        match self.account(id) {
            Some(a) => json!({"id": a.id, "name": a.username,
                "title": if a.bot { json!("BOT") } else { Value::Null }, "rating": 1500}),
            None => json!({"id": id, "name": id, "title": null, "rating": 1500}),
        }
    }

    /// `GET /api/account`.
    pub(crate) fn account_json(&self, user: &str) -> Value {
        let mut v = self.user_json(user);
        v["username"] = v["name"].clone();
        v
    }

    /// `GET /api/bot/online`: the other bot accounts, as lichess's ND-JSON user list
    /// (matchmaking).
    pub(crate) fn online_lines(&self, user: &str) -> String {
        self.config
            .accounts
            .iter()
            .filter(|a| a.bot && a.id != user)
            .map(|a| {
                let u = json!({"id": a.id, "username": a.username, "title": "BOT",
                    "perfs": {"atomic": {"games": 10, "rating": 1500, "rd": 60, "prog": 0}}});
                format!("{u}\n")
            })
            .collect()
    }

    pub(crate) fn upgrade(&mut self, user: &str) -> Res<()> {
        if self.games.values().any(|g| g.color_of(user).is_some()) {
            return err(400, "This account has already played games");
        }
        match self.config.accounts.iter_mut().find(|a| a.id == user) {
            Some(a) => {
                a.bot = true;
                Ok(())
            }
            None => err(404, "No such user"),
        }
    }
}
