//! The service provider's metadata: the XML an identity provider's administrator loads (or
//! whose URL they paste) to trust quire for one SAML provider.

/// Escapes `&`, `<`, `>`, `"` and `'`: safe in XML text and in a quoted attribute, as in HTML.
pub(crate) use html_escape::encode_quoted_attribute as escape;

/// What names quire to an identity provider, for one SAML provider.
#[derive(Clone, Debug)]
pub struct ServiceProvider {
    /// quire's entity id for this provider: the metadata's own URL.
    pub entity_id: String,
    /// Where the identity provider posts its responses (HTTP-POST binding).
    pub acs_url: String,
}

impl ServiceProvider {
    /// The SAML 2.0 metadata document: an SP SSO descriptor that wants signed assertions and
    /// takes responses at the ACS URL by HTTP-POST.
    pub fn metadata_xml(&self) -> String {
        format!(
            concat!(
                r#"<?xml version="1.0" encoding="UTF-8"?>"#,
                "\n",
                r#"<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="{entity}">"#,
                "\n  ",
                r#"<md:SPSSODescriptor AuthnRequestsSigned="false" WantAssertionsSigned="true" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">"#,
                "\n    ",
                "<md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>",
                "\n    ",
                r#"<md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="{acs}" index="0" isDefault="true"/>"#,
                "\n  </md:SPSSODescriptor>\n</md:EntityDescriptor>\n"
            ),
            entity = escape(&self.entity_id),
            acs = escape(&self.acs_url),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_names_the_entity_and_the_acs_escaped() {
        let sp = ServiceProvider {
            entity_id: "https://docs.example.com/v1/orgs/o/saml/p/metadata".into(),
            acs_url: "https://docs.example.com/acs?a=1&b=\"2\"".into(),
        };
        let xml = sp.metadata_xml();
        let doc = roxmltree::Document::parse(&xml).expect("well-formed");
        let root = doc.root_element();
        assert_eq!(root.attribute("entityID"), Some(sp.entity_id.as_str()));
        let acs = root
            .descendants()
            .find(|n| n.has_tag_name("AssertionConsumerService"))
            .expect("an ACS");
        assert_eq!(acs.attribute("Location"), Some(sp.acs_url.as_str()));
    }
}
