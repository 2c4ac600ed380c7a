//! Where sampling settings apply. The most specific scope that has settings wins:
//! chat, then model, then global, then the defaults.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::ChatId;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum SettingsScope {
    Global,
    /// A model file, by path.
    Model {
        path: String,
    },
    Chat {
        #[ts(type = "number")]
        id: ChatId,
    },
}

impl SettingsScope {
    /// The storage key of this scope's own settings.
    pub fn key(&self) -> String {
        match self {
            SettingsScope::Global => "sampling".into(),
            SettingsScope::Model { path } => format!("sampling:model:{path}"),
            SettingsScope::Chat { id } => format!("sampling:chat:{id}"),
        }
    }

    /// This scope and the broader ones it inherits from, most specific first. A chat inherits
    /// from the model it runs on (`model`), a model from the global settings.
    pub fn lookup_order(&self, model: Option<&str>) -> Vec<SettingsScope> {
        let mut order = vec![self.clone()];
        if let (SettingsScope::Chat { .. }, Some(path)) = (self, model) {
            order.push(SettingsScope::Model { path: path.to_owned() });
        }
        if *self != SettingsScope::Global {
            order.push(SettingsScope::Global);
        }
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_goes_from_specific_to_global() {
        let model = || SettingsScope::Model { path: "/m.gguf".into() };
        let cases = [
            (SettingsScope::Global, Some("/m.gguf"), vec!["sampling"]),
            (model(), None, vec!["sampling:model:/m.gguf", "sampling"]),
            (SettingsScope::Chat { id: 7 }, Some("/m.gguf"), vec!["sampling:chat:7", "sampling:model:/m.gguf", "sampling"]),
            (SettingsScope::Chat { id: 7 }, None, vec!["sampling:chat:7", "sampling"]),
        ];
        for (scope, model, expected) in cases {
            let keys: Vec<String> = scope.lookup_order(model).iter().map(SettingsScope::key).collect();
            assert_eq!(keys, expected, "{scope:?}");
        }
    }
}
