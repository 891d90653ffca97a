//! How the next upload runs: its mode and extraction template.

use leptos::prelude::*;
use pipeline::pdf::Template;
use pipeline::status::Mode;

/// The mode (batch at half price by default, or sync) and the template (from the templates
/// the Worker knows).
#[component]
pub fn UploadOptions(mode: RwSignal<Mode>, template: RwSignal<Template>) -> impl IntoView {
    let pick_template = move |ev| {
        let picked = event_target_value(&ev);
        if let Some(t) = Template::ALL.into_iter().find(|t| t.as_str() == picked) {
            template.set(t);
        }
    };
    view! {
        <label>"Mode "
            <select data-testid="upload-mode" on:change=move |ev| {
                mode.set(event_target_value(&ev).parse::<Mode>().unwrap_or(Mode::Batch))
            }>
                <option value=Mode::Batch.as_str() selected>"batch (half price)"</option>
                <option value=Mode::Sync.as_str()>"sync"</option>
            </select>
        </label>
        <label>"Template "
            <select data-testid="upload-template" on:change=pick_template>
                {Template::ALL.map(|t| view! {
                    <option value=t.as_str() selected=t == Template::Summary>{t.as_str()}</option>
                }).collect_view()}
            </select>
        </label>
    }
}
